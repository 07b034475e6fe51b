"""Read a JSON file given on a management command's command line."""
import json


def read_json_file(path, *, error):
    """Return the parsed content of the JSON file at ``path``.

    Args:
        path: file name as the user typed it (it appears in the messages).
        error: exception class raised, with a one-line message, when the file is
            missing, unreadable, not UTF-8 or not valid JSON; each command passes
            the error type it already reports (CommandError, TreeError).
    """
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except FileNotFoundError:
        raise error(f"File not found: {path}")
    except IsADirectoryError:
        raise error(f"Not a file: {path}")
    except OSError as exc:
        raise error(f"Cannot read {path}: {exc.strerror or exc}")
    except UnicodeDecodeError as exc:
        raise error(f"{path} is not UTF-8 text: {exc}")
    except json.JSONDecodeError as exc:
        raise error(f"{path} is not valid JSON: {exc.msg} (line {exc.lineno}, "
                    f"column {exc.colno})")
