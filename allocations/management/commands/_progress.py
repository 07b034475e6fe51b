"""A tiny progress bar for management commands (no dependency).

On a terminal it redraws one line on stderr; otherwise (logs, pipes, tests)
it writes a single summary line when the work is done, so output stays
readable. Django does not load modules starting with "_" as commands.
"""
import sys


class Progress:
    """with Progress(stream, "Importing providers", total=40) as bar: bar.advance()"""

    WIDTH = 30

    def __init__(self, stream, label, total):
        self.stream = stream if stream is not None else sys.stderr
        self.label = label
        self.total = max(int(total), 0)
        self.done = 0
        self.interactive = _isatty(self.stream)

    def __enter__(self):
        self._draw()
        return self

    def __exit__(self, exc_type, exc, tb):
        if exc_type is None:
            self.finish()
        elif self.interactive:
            self.stream.write("\n")
        return False

    def advance(self, step=1):
        self.done = min(self.done + step, self.total) if self.total else self.done + step
        self._draw()

    def finish(self):
        if self.interactive:
            self._draw()
            self.stream.write("\n")
        else:
            self.stream.write(f"{self.label}: {self.done}/{self.total} done\n")
        _flush(self.stream)

    def _draw(self):
        if not self.interactive:
            return
        filled = int(self.WIDTH * self.done / self.total) if self.total else self.WIDTH
        bar = "#" * filled + "." * (self.WIDTH - filled)
        self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total}")
        _flush(self.stream)


def _isatty(stream):
    target = getattr(stream, "_out", stream)  # Django's OutputWrapper keeps the real stream in _out
    try:
        return bool(target.isatty())
    except (AttributeError, ValueError):
        return False


def _flush(stream):
    flush = getattr(stream, "flush", None)
    if flush is not None:
        try:
            flush()
        except ValueError:
            pass
