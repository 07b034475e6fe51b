"""Progress of a management command: a tqdm bar on a terminal, otherwise (logs, pipes,
tests) one summary line once the work is done. Django does not load modules starting
with "_" as commands."""
from contextlib import contextmanager

from tqdm import tqdm


@contextmanager
def progress(stream, label, total):
    """with progress(self.stderr, "Importing", total=40) as advance: ... advance() ..."""
    target = getattr(stream, "_out", stream)  # Django's OutputWrapper keeps the real stream
    interactive = hasattr(target, "isatty") and target.isatty()
    done = 0
    bar = tqdm(total=total, desc=label, file=target, disable=not interactive)

    def advance():
        nonlocal done
        done += 1
        bar.update()

    try:
        yield advance
    finally:
        bar.close()
    if not interactive:
        stream.write(f"{label}: {done}/{total} done")
