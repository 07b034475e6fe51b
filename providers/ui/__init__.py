"""The providers app's operator pages (routed by providers/ui/urls.py under /ui/).

trees          the provider list: trees, progressively loaded subtrees, CSV export
provider_page  one provider: usage, inventories, traits, aggregates, its writes
capacity       the whole cloud's capacity per class and the heatmap
catalogue      resource classes and traits
bulk           bulk edit of allocation ratios and reserved amounts
links          page URLs reversed once per page, for tables of many rows
change_log     the change log section (provider and consumer pages)
tree_layout    pure layout of trees and usage bars
forms, bulk_forms, catalogue_forms   the pages' forms (shape only; services judge)
"""
