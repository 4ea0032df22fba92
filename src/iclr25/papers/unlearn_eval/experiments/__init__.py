"""The experiments of unlearn_eval, one module each."""
