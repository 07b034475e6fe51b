"""Accept header matching (RFC 7231 media ranges with q-values)."""


def _media_ranges(accept):
    for part in accept.split(","):
        pieces = [p.strip() for p in part.split(";")]
        if not pieces[0]:
            continue
        q = 1.0
        for param in pieces[1:]:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        yield pieces[0].lower(), q


def acceptable(accept, offer):
    """RFC 7231 matching: does the most specific range covering `offer` allow it?"""
    kind = offer.split("/")[0] + "/*"
    best = None  # (specificity, q)
    for media, q in _media_ranges(accept):
        if media == offer:
            specificity = 2
        elif media == kind:
            specificity = 1
        elif media == "*/*":
            specificity = 0
        else:
            continue
        if best is None or specificity > best[0]:
            best = (specificity, q)
    return best is not None and best[1] > 0


def accepts_json(accept):
    if not accept or accept.strip() == "*/*":
        return True
    return acceptable(accept, "application/json")
