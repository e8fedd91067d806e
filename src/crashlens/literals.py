"""What every match of a catalog pattern must contain: strings, one of which is in any matching text.

A text with none of them cannot match, so the pattern is neither compiled nor run on it (the `regex`
module compiles at about 1 ms a pattern, and most patterns never match most crashes). The analysis is
conservative: it reads the pattern's top level and its plain groups, and gives up (None) on anything
it does not know for sure: case-insensitive or verbose flags, escapes such as \\x41, conditionals.
tests/test_signatures.py checks it against every match of every shipped pattern on real text.
"""

from __future__ import annotations

from collections.abc import Iterator

from . import recache

MIN_LENGTH = 3  # shorter strings rule out too little to be worth the check
_BRACES = recache.compile(r"\{(\d*)(?:,\d*)?\}")  # a counted repetition
_SINGLE_ESCAPES = frozenset("bBdDsSwWAZntrfva")  # one-character tokens that are not literal text
_LITERAL_ESCAPES = frozenset("\\.()[]{}|^$*+?/-\"' :,=<>#&%@!~`;_")


class _GiveUp(Exception):
    pass


def required_literals(pat: str) -> tuple[str, ...] | None:
    """Strings at least MIN_LENGTH long, one of which every match of `pat` contains; None if unknown."""
    if "(?i" in pat or "(?x" in pat or "(?a" in pat or "(?L" in pat:
        return None
    try:
        found = _any_of(pat, 0, len(pat))
    except _GiveUp:
        return None
    if not found or min(len(s) for s in found) < MIN_LENGTH:
        return None
    return found


def _skip_class(pat: str, i: int) -> int:
    """Index just past the character class opening at pat[i]."""
    j = i + 1
    if j < len(pat) and pat[j] == "^":
        j += 1
    if j < len(pat) and pat[j] == "]":
        j += 1
    while j < len(pat) and pat[j] != "]":
        if pat[j] == "\\":
            j += 1
        elif pat[j] == "[":  # a nested set (regex V1 syntax) or [:alpha:]: do not guess
            raise _GiveUp
        j += 1
    if j >= len(pat):
        raise _GiveUp
    return j + 1


def _outside(pat: str, lo: int, hi: int) -> Iterator[tuple[int, str]]:
    """(index, character) of pat[lo:hi] outside escapes and character classes."""
    j = lo
    while j < hi:
        c = pat[j]
        if c == "\\":
            j += 2
        elif c == "[":
            j = _skip_class(pat, j)
        else:
            yield j, c
            j += 1


def _group_end(pat: str, i: int) -> int:
    """Index of the `)` closing the group opening at pat[i]."""
    depth = 0
    for j, c in _outside(pat, i, len(pat)):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
            if depth == 0:
                return j
    raise _GiveUp


def _branches(pat: str, lo: int, hi: int) -> list[tuple[int, int]]:
    """pat[lo:hi] split at its top-level `|`."""
    out, start, depth = [], lo, 0
    for j, c in _outside(pat, lo, hi):
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            out.append((start, j))
            start = j + 1
    out.append((start, hi))
    return out


def _any_of(pat: str, lo: int, hi: int) -> tuple[str, ...] | None:
    parts = _branches(pat, lo, hi)
    if len(parts) == 1:
        return _sequence(pat, lo, hi)
    out: list[str] = []
    for a, b in parts:
        got = _sequence(pat, a, b)
        if not got:
            return None  # a branch that requires nothing: the whole requires nothing
        out.extend(got)
    return tuple(dict.fromkeys(out))


def _quantifier(pat: str, j: int, hi: int) -> tuple[int, bool, bool]:
    """The quantifier at pat[j:hi], if any: (its length, may repeat zero times, repeats)."""
    if j >= hi:
        return 0, False, False
    c = pat[j]
    if c in "?*+":
        n = 2 if j + 1 < hi and pat[j + 1] in "?+" else 1  # lazy or possessive
        return n, c != "+", c != "?"
    if c == "{":
        m = _BRACES.match(pat, j)
        if m and m.end() <= hi:
            least = int(m.group(1) or 0)
            return m.end() - j, least == 0, True
    return 0, False, False


def _better(a: tuple[str, ...] | None, b: tuple[str, ...] | None) -> tuple[str, ...] | None:
    """Of two requirements, the one that rules out more: longer shortest string, then fewer strings."""
    if not a:
        return b
    if not b:
        return a
    ka, kb = (min(map(len, a)), -len(a)), (min(map(len, b)), -len(b))
    return b if kb > ka else a


def _sequence(pat: str, lo: int, hi: int) -> tuple[str, ...] | None:
    """What a branch without top-level `|` requires: its best literal run or required group."""
    best: tuple[str, ...] | None = None
    run = ""
    i = lo
    while i < hi:
        c = pat[i]
        atom: str | None = None  # literal text this atom always matches
        group: tuple[str, ...] | None = None
        if c == "\\":
            if i + 1 >= hi:
                raise _GiveUp
            e = pat[i + 1]
            if e in _LITERAL_ESCAPES:
                atom = e
            elif e not in _SINGLE_ESCAPES:
                raise _GiveUp  # \x41, \u…, \N{…}, back-references, octal: not worth reading
            end = i + 2
        elif c == "[":
            end = _skip_class(pat, i)
        elif c == "(":
            close = _group_end(pat, i)
            body = i + 1
            if pat.startswith("?:", body):
                body += 2
            elif pat.startswith("?P<", body):
                body = pat.index(">", body) + 1
            elif pat.startswith("?", body):
                body = -1  # lookaround, back-reference, comment, flags: requires nothing here
                if not pat.startswith(("?=", "?!", "?<=", "?<!", "?#"), i + 1):
                    raise _GiveUp
            group = _any_of(pat, body, close) if body >= 0 else None
            end = close + 1
        elif c in ".^$":
            end = i + 1
        elif c in "*+?{)|":
            raise _GiveUp  # a quantifier with nothing before it, or unbalanced: not a pattern we read
        else:
            atom, end = c, i + 1
        qlen, optional, repeats = _quantifier(pat, end, hi)
        if optional:
            atom = group = None
        if atom is not None:
            run += atom
        if atom is None or repeats:  # `ab+c` holds "ab", not "abc"
            best = _better(best, (run,) if run else None)
            run = ""
        best = _better(best, group)
        i = end + qlen
    return _better(best, (run,) if run else None)
