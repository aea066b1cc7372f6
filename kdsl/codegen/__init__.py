"""Code generators: one renderer per target below the work-item IR."""
