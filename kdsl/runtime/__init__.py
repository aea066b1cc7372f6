"""Runtime: the JIT kernel object, backend registry and launch path."""
