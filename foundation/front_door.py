"""The front door's request-line limit, written once: nginx's header buffers (serve.py),
gunicorn's limit_request_line and limit_request_field_size (gunicorn_conf.py), and the
operator UI, which says when a query is too long to travel in a URL (console.candidates.pages).

No Django here: gunicorn's master reads this module before Django is set up.
"""

# bytes of a request line ("GET /path?query HTTP/1.1") or of one header line: gunicorn's
# largest; a longer one is answered 400 with Placement's error body
REQUEST_LINE_LIMIT = 8190
# nginx keeps a request line and its CRLF in one of these buffers
HEADER_BUFFER = REQUEST_LINE_LIMIT + 2


def query_holds_nul(query):
    """Whether a key or value of `query` (a QueryDict) holds a NUL character: no
    Placement name, uuid or number can, and PostgreSQL cannot compare one (a 500)."""
    return any("\x00" in key or any("\x00" in value for value in values)
               for key, values in query.lists())


def request_line_bytes(path_and_query, method="GET"):
    """The size of the request line that asks for `path_and_query` (ASCII, as sent)."""
    return len(f"{method} {path_and_query} HTTP/1.1".encode())


def fits_in_link(path_and_query):
    """True when a page's URL is short enough to be a link: its request line within half
    the limit, as the URL also comes back in the next request's Referer header line,
    after the scheme and host."""
    return request_line_bytes(path_and_query) <= REQUEST_LINE_LIMIT // 2


# nginx stamps each request with the time it passed it on (serve.py), so that the commit
# deadline counts the time a request waited for a free thread too.
REQUEST_START_HEADER = "X-Placement-Request-Start"
_REQUEST_START_META = "HTTP_" + REQUEST_START_HEADER.upper().replace("-", "_")


def seconds_left(meta, budget, now):
    """What remains of `budget` seconds since the front door passed the request on
    (`now`: time.time()); the whole budget without the stamp (no front door). A stamp
    can only shorten the budget."""
    try:
        waited = now - float(meta.get(_REQUEST_START_META, ""))
    except ValueError:
        return budget
    return budget - max(0.0, waited)
