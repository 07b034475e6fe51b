"""Helpers every app's operator pages use: numbers, row links, name order."""
