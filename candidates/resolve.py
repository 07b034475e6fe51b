"""Names -> database ids for one request (resource classes, traits, aggregates, in_tree).

Everything a request mentions, and the sharing providers every request needs, are
looked up in one query (sql/names.py), with the bounds of the root provider ids
that batches of anchors walk; names that do not exist are simply absent
from the returned maps. Every resource class comes along (a short table): provider
summaries name the classes of every inventory they show. Whether an absent name is an error or just means "no
candidate" is decided by the engine, which follows Placement's lazy order
(allocation-candidates.md §3.6).
"""
from dataclasses import dataclass

from candidates.sql.names import ids_by_name
from providers.rules.names import SHARING_TRAIT


@dataclass
class Names:
    classes: dict      # name -> id, of every resource class
    traits: dict       # name -> id
    aggregates: dict   # uuid -> id
    providers: dict    # uuid -> root id (for in_tree)
    sharing: list = ()  # ids of the sharing providers, ascending
    root_bounds: tuple = (None, None)   # (lowest, highest) root provider id
    root_count: int = 0   # how many root providers there are


def resolve(query):
    """Look up every name `query` (a CandidateQuery) mentions."""
    class_names, trait_names, aggregate_uuids, tree_uuids = set(), set(), set(), set()
    trait_names |= query.root_required | query.root_forbidden
    for clause in query.root_member_of.any_of:
        aggregate_uuids |= clause
    aggregate_uuids |= query.root_member_of.forbidden
    for group in query.groups:
        class_names.update(name for name, _ in group.resources)
        trait_names |= group.traits.names()
        for clause in group.aggregates.any_of:
            aggregate_uuids |= clause
        aggregate_uuids |= group.aggregates.forbidden
        if group.in_tree:
            tree_uuids.add(group.in_tree)
    return Names(**ids_by_name(classes=class_names, traits=trait_names,
                               aggregates=aggregate_uuids, providers=tree_uuids,
                               sharing_trait=SHARING_TRAIT, every_class=True,
                               root_bounds=True))
