"""Dialects of the kdsl IR, one module each (see ``kdsl.ir.registry``)."""
