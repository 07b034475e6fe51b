# The engine's modules load compiled when a current build exists (candidates/compiled.py).
from candidates import compiled

compiled.install()
