"""Semantic vectors of history exchanges, in a database file of their own.

Storage only: the `local_vectors` provider computes the embeddings and decides what to
store; this package keeps them per scope and finds the nearest ones by an exact scan.
"""
