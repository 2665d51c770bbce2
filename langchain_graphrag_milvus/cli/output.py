r"""Everything the CLI prints goes through here: control characters never reach the terminal.

Passages, file names, entity names and error messages are data written by others. A
passage holding ``ESC [ 2 J`` would clear the user's screen, an OSC sequence could set
the window title or a hyperlink, a carriage return could overwrite the line it is on.
So every character of Unicode category ``Cc`` (C0, DEL, C1: ``ESC``, ``CSI``, ``BEL``,
``CR``, ``TAB``...), the line and paragraph separators U+2028 / U+2029, the
bidirectional overrides (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F) and lone
surrogates (from undecodable file names) are printed as escapes: ``\x1b``, ``\u202e``,
``\udce9``. Newlines are kept only where the CLI puts them (between lines it writes).

JSON output (``--json``) is escaped the same way with JSON's ``\uXXXX`` escapes, so it
stays valid JSON that decodes to the original strings.

Example:
    >>> terminal_text("red \x1b[31malert\x1b[0m\r")
    'red \\x1b[31malert\\x1b[0m\\x0d'
    >>> terminal_text("two\nlines", newlines=True)
    'two\nlines'
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

__all__ = ["terminal_text", "terminal_json", "emit", "emit_error"]

_OTHERS = "\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\u200e\u200f\ud800-\udfff"
_UNSAFE = re.compile(f"[\x00-\x1f{_OTHERS}]")
_UNSAFE_KEEP_NEWLINE = re.compile(f"[\x00-\x09\x0b-\x1f{_OTHERS}]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _json_escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def terminal_text(text: Any, *, newlines: bool = False) -> str:
    r"""``text`` (any value, via ``str``) with control characters escaped; see the module rules.

    Args:
        text: What to print.
        newlines: Keep ``\n`` as a line break (for text the CLI laid out itself);
            otherwise it is escaped too.
    """
    pattern = _UNSAFE_KEEP_NEWLINE if newlines else _UNSAFE
    return pattern.sub(_escape, str(text))


def terminal_json(value: Any) -> str:
    """``value`` as indented JSON whose every string is safe to print (still valid JSON)."""
    raw = json.dumps(value, indent=1, ensure_ascii=False, default=str)
    return _UNSAFE_KEEP_NEWLINE.sub(_json_escape, raw)  # raw newlines in JSON are the indentation only


def emit(text: Any) -> None:
    r"""Print CLI-made lines on stdout (``\n`` kept, everything else escaped)."""
    print(terminal_text(text, newlines=True))  # noqa: T201


def emit_error(text: Any) -> None:
    """Print a message on stderr as one line (a newline in it is escaped)."""
    print(terminal_text(text), file=sys.stderr, flush=True)  # noqa: T201
