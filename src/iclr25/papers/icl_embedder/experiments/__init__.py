"""Experiments of the icl_embedder paper."""
