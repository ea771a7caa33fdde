"""Code generation: each layer's execution block and its chain of code transformations, and the output folder's files."""
