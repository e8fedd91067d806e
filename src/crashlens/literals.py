"""What every match of a catalog pattern must contain: strings, one of which is in any matching text.

A text with none of them cannot match, so the pattern is neither compiled nor run on it (the `regex`
module compiles at about 1 ms a pattern, and most patterns never match most crashes). The analysis is
conservative: it reads the pattern's top level and its plain groups, and gives up (None) on anything
it does not know for sure: case-insensitive or verbose flags, escapes such as \\x41, conditionals.
tests/test_signatures.py checks it against every match of every shipped pattern on real text.
"""

from __future__ import annotations

import os.path
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


# ---- covers: more precise sets of strings, for the fast path's fact markers ----------------------

COVER_CAP = 32  # strings a cover may hold (each is a marker the fast path searches for)
_GOOD_ENOUGH = 8  # a cover whose strings are all this long is as good as longer ones; fewer wins
_SPREAD_LENGTH = 5  # an alternation distributed over the rest wins if its strings are this long
_SHARED_PREFIX = 16  # strings that all start with this many characters in common give way to them


class _Budget(Exception):
    pass


def covering_literals(pat: str) -> tuple[str, ...] | None:
    """ASCII strings, one of which every match of `pat` contains, chosen to rule out as many lines as
    possible; None if none is known.

    required_literals takes the best single run of literal text; a cover also multiplies out what a
    run is followed by (a small class, an optional part, an alternation, which is distributed over
    the rest of the pattern). `\\btorch(?:==|\\s+version:?\\s*|: | )v?2\\.\\d+` needs "torch", which
    most lines of a server log that names torch hold; its cover is "torch==2.", "torch==v2.",
    "version", "torch: 2.", "torch: v2.", "torch 2.", "torch v2.", which `Init torch distributed`
    does not hold. Read with the parser `re` uses; a pattern it cannot read, or a case-insensitive
    one, has no cover."""
    from .recache import _parser

    try:
        parsed = _parser.parse(pat)
    except Exception:  # noqa: BLE001 - syntax only the `regex` module reads: no cover
        return None
    if parsed.state.flags & (_parser.SRE_FLAG_IGNORECASE | _parser.SRE_FLAG_VERBOSE):
        return None
    budget = [2000]
    try:
        got = _cover(list(parsed), 0, frozenset({""}), budget)
    except _Budget:
        return None
    if got is None or not all(s.isascii() for s in got):
        return None
    common = os.path.commonprefix(list(got))
    if len(got) > 1 and len(common) >= _SHARED_PREFIX:
        return (common,)  # as selective in practice, and fewer strings to search for
    return tuple(sorted(got, key=lambda s: (len(s), s)))


def _score(c: frozenset[str] | None) -> tuple[int, int]:
    if not c or min(map(len, c)) < MIN_LENGTH:
        return (-1, 0)
    return (min(_GOOD_ENOUGH, min(map(len, c))), -len(c))


def _pick(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    return b if _score(b) > _score(a) else (a if _score(a) >= (0, 0) else None)


def _lang(item: tuple[object, object]) -> frozenset[str] | None:
    """Every string one item of a parsed pattern can match, if they are few; None otherwise."""
    from .recache import _parser as p

    op, av = item
    if op is p.LITERAL:
        return frozenset({chr(av)})  # type: ignore[arg-type]
    if op is p.AT:
        return frozenset({""})  # ^, $, \b: match no text
    if op is p.IN:
        chars: set[str] = set()
        for kind, val in av:  # type: ignore[attr-defined]
            if kind is p.LITERAL:
                chars.add(chr(val))
            elif kind is p.RANGE and val[1] - val[0] < 10:
                chars.update(chr(c) for c in range(val[0], val[1] + 1))
            else:
                return None  # negated, a category such as \s or \w, a wide range
        return frozenset(chars) if len(chars) <= 10 else None
    if op is p.SUBPATTERN:
        if av[1] or av[2]:  # type: ignore[index]
            raise _Budget  # local flags: give up on the whole
        return _seq_lang(list(av[3]))  # type: ignore[index]
    if op is p.BRANCH:
        out: set[str] = set()
        for branch in av[1]:  # type: ignore[index]
            got = _seq_lang(list(branch))
            if got is None:
                return None
            out |= got
        return frozenset(out) if len(out) <= COVER_CAP else None
    if op in (p.MAX_REPEAT, p.MIN_REPEAT):
        lo, hi, sub = av  # type: ignore[misc]
        inner = _seq_lang(list(sub))
        if inner is None or hi > 3:
            return None
        out = {""} if lo == 0 else set()
        acc = frozenset({""})
        for k in range(1, hi + 1):
            acc = _product(acc, inner)
            if acc is None:
                return None
            if k >= lo:
                out |= acc
        return frozenset(out) if len(out) <= COVER_CAP else None
    if op in (p.ASSERT, p.ASSERT_NOT):
        return frozenset({""})  # a lookaround matches no text
    return None


def _seq_lang(items: list[tuple[object, object]]) -> frozenset[str] | None:
    acc: frozenset[str] | None = frozenset({""})
    for item in items:
        lang = _lang(item)
        if lang is None:
            return None
        acc = _product(acc, lang)  # type: ignore[arg-type]
        if acc is None:
            return None
    return acc


def _product(a: frozenset[str], b: frozenset[str]) -> frozenset[str] | None:
    if len(a) * len(b) > COVER_CAP:
        return None
    return frozenset(x + y for x in a for y in b)


def _cover(items: list[tuple[object, object]], i: int, run: frozenset[str], budget: list[int]) -> frozenset[str] | None:
    """The best cover of items[i:], whose matches all follow a match of one string of `run`. (`run`
    itself, not grown, is no answer: a branch is distributed to do better than what comes before it.)"""
    from .recache import _parser as p

    given = run
    budget[0] -= 1
    if budget[0] < 0:
        raise _Budget
    best: frozenset[str] | None = None
    while i < len(items):
        op, av = items[i]
        if op is p.SUBPATTERN and not (av[1] or av[2]):  # type: ignore[index]
            items = items[:i] + list(av[3]) + items[i + 1 :]  # type: ignore[index]  # a plain group: inline it
            continue
        lang = _lang(items[i])
        grown = _product(run, lang) if lang is not None else None
        if grown is not None:
            run = grown
            i += 1
            continue
        if op is p.BRANCH:
            # Every match goes through one branch: each branch with the rest of the pattern after it.
            spread: set[str] = set()
            own: set[str] = set()
            for branch in av[1]:  # type: ignore[index]
                got = _cover(list(branch) + items[i + 1 :], 0, run, budget)
                alone = _cover(list(branch), 0, frozenset({""}), budget)
                if got is None or not got or min(map(len, got)) < MIN_LENGTH:
                    spread = set()
                    break
                spread |= got
                own |= alone or {""}
            if spread and len(spread) <= COVER_CAP:
                best = _pick(best, frozenset(spread))
                if min(map(len, spread)) >= _SPREAD_LENGTH:
                    # Each string grows the run before the branch or is a long literal of its own
                    # branch: more selective than the run, however long the run is.
                    best = frozenset(spread)
                    run = given = frozenset({""})
            best = _pick(best, frozenset(own) if len(own) <= COVER_CAP else None)
        elif op in (p.MAX_REPEAT, p.MIN_REPEAT) and av[0] >= 1:  # type: ignore[index]
            sub = list(av[2])  # type: ignore[index]
            first = _seq_lang(sub)
            if first is not None:
                best = _pick(best, _product(run, first))
            best = _pick(best, _cover(sub, 0, frozenset({""}), budget))
        if run is not given:
            best = _pick(best, run)
        run = frozenset({""})
        i += 1
    return _pick(best, run) if run is not given else best
