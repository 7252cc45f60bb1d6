"""The shared kernel of both packages: errors, escaping, checked reads, the one output writer,
paths, the vocabulary (precisions, engines), the progress line and the version string.

It imports nothing else of the project; every other layer may import it.
"""
