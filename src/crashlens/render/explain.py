"""`crashlens explain ID`: a signature's fix templates, with each {placeholder} said in words.

A template is filled from a crash (diagnose.render_template); explain has no crash at hand, so each
placeholder is shown as <name>, and a legend says what each name stands for."""

from __future__ import annotations

import re

_VAR = re.compile(r"\{([a-z_][a-z0-9_.]*)\}")

# What each value a fix template can use stands for (diagnose._vars fills them from a crash).
PLACEHOLDERS = {
    "callee": "the call dynamo rejected, e.g. _thread.allocate_lock",
    "dynamo.hint": "dynamo's own advice for this graph break (its first `Hint:` line, torch 2.7+)",
    "dynamo.hints": "every `Hint:` line dynamo printed for this graph break",
    "dynamo.gb_type": "the graph break's type as dynamo names it (its headline, torch 2.7+)",
    "culprit.where": "the culprit frame: library file, line and function",
    "culprit.file": "the culprit's file",
    "culprit.short": "the culprit's file, from its package on",
    "culprit.line": "the culprit's line",
    "culprit.function": "the culprit's function",
    "culprit.source": "the culprit's source line",
    "library": "the culprit's package",
    "entry.qualified": "the library function your compiled code calls, as module.function",
    "entry.function": "the library function your compiled code calls",
    "entry.file": "the file of that library function",
    "entry.short": "the file of that library function, from its package on",
    "entry.line": "the line of that library function",
    "caller.where": "your code's call into the library: file, line and function",
    "caller.file": "the file of your code's call into the library",
    "caller.line": "the line of your code's call into the library",
    "caller.function": "the function of your code that calls the library",
    "caller.source": "the source line of your code's call into the library",
    "server.name": "the server (sglang, vllm)",
    "server.off_flag": "the flag that turns off this server version's compiled path",
    "api.custom_op": "the custom-op code for the torch in the log (signatures/_torch_api.toml: custom_op + register_fake on 2.4+, define/impl_abstract on 2.2-2.3, Library + a Meta kernel on 2.1)",
    "api.custom_op_api": "the name of that custom-op API for the torch in the log",
    "api.is_compiling": "torch.compiler.is_compiling() on torch 2.3+, torch._dynamo.is_compiling() before",
    "api.is_compiling_guard": "the guard statement `if not <is_compiling>():` as code for the torch in the log (the version note outside it when unknown)",
    "api.register_fake": "how to register a fake implementation for the torch in the log: register_fake on 2.4+, impl_abstract on 2.2-2.3, a Meta kernel on 2.1",
}


def stands_for(name: str) -> str:
    if name in PLACEHOLDERS:
        return PLACEHOLDERS[name]
    if name.startswith("version."):
        return f"the {name.partition('.')[2]} version in the log"
    return f"the {name.replace('_', ' ').replace('.', ' ')} read from the log"


def described(text: str) -> str:
    """The template with each {placeholder} shown as <placeholder>: a value to fill in, not text to copy."""
    return _VAR.sub(lambda m: f"<{m.group(1)}>", text)


def placeholders(*texts: str) -> list[str]:
    """The placeholders the texts use, first use first."""
    return list(dict.fromkeys(m.group(1) for t in texts for m in _VAR.finditer(t)))
