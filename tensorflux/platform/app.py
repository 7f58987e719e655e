"""`tf.app`: the TF1 program entry point, `tf.app.run(main)`.

As in TensorFlow 1.x, `run` parses the global `FLAGS` with unknown flags tolerated (they stay
in the argv handed to `main`, for programs that parse the rest themselves), calls `main` and
exits the process with its return value.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from tensorflux.platform import flags

__all__ = ["flags", "parse_absl_flags", "run"]

_HELP_ARGS = ("--help", "-help", "--helpshort", "-helpshort", "--helpfull", "-helpfull", "-?")


def _usage(program: str) -> str:
    return f"\n       USAGE: {program} [flags]\nflags:\n\n{flags.FLAGS.get_help()}\n"


def _wants_help(argv: list[str]) -> bool:
    for arg in argv[1:]:
        if arg == "--":
            return False
        name = arg.lstrip("-").partition("=")[0]
        if arg in _HELP_ARGS and name not in flags.FLAGS:
            return True
    return False


def run(main: Callable[[list[str]], object] | None = None, argv: list[str] | None = None):
    """Parses flags, runs `main(remaining_argv)` and exits with its result.

    Args:
      main: called with `[program, *positional and unknown arguments]`; defaults to the `main`
        function of the `__main__` module.
      argv: the command line; defaults to `sys.argv`.

    Raises:
      SystemExit: always: with `main`'s return value (None means 0), with 1 after printing a
        flags parsing error or the `--help` text (as absl does).

    Example:
        def main(argv):
          print(FLAGS.learning_rate, argv[1:])

        if __name__ == "__main__":
          tf.app.run()
    """
    if main is None:
        main = getattr(sys.modules["__main__"], "main", None)
        if main is None:
            raise AttributeError(
                "tf.app.run() was given no main and module __main__ has no function `main`"
            )
    argv = sys.argv if argv is None else argv
    if _wants_help(list(argv)):
        print(_usage(argv[0] if argv else "program"))
        sys.exit(1)
    try:
        remaining = flags.FLAGS(argv, known_only=True)
    except flags.Error as e:
        print(f"FATAL Flags parsing error: {e}", file=sys.stderr)
        print("Pass --helpshort or --helpfull to see help on flags.", file=sys.stderr)
        sys.exit(1)
    remaining = parse_absl_flags(remaining)
    sys.exit(main(remaining))


def parse_absl_flags(argv: list[str]) -> list[str]:
    """Parses absl's global FLAGS too when the program imported absl (as TF 1.x's run did).

    TF 1.x's `tf.flags` was absl's registry, so programs define flags with `from absl import
    flags` next to `tf.flags` and read both after `tf.app.run()`. tensorflux keeps its own
    registry and does not import absl; when the program has, the arguments ours left over are
    handed to absl's `FLAGS` (unknown ones tolerated) and what absl leaves is returned.

    Args:
      argv: `[program, *arguments]` left over by tensorflux's own `FLAGS`.

    Returns:
      The arguments absl did not consume (`argv` itself when absl was not imported).

    Raises:
      SystemExit: with 1 after printing absl's flags parsing error.
    """
    absl_flags = sys.modules.get("absl.flags")
    if absl_flags is None or not argv:
        return argv
    try:
        return list(absl_flags.FLAGS(list(argv), known_only=True))
    except absl_flags.Error as e:
        print(f"FATAL Flags parsing error: {e}", file=sys.stderr)
        print("Pass --helpshort or --helpfull to see help on flags.", file=sys.stderr)
        sys.exit(1)
