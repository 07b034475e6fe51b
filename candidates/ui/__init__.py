"""The candidates app's operator pages: the explorer, its CSV and "why not?"."""
