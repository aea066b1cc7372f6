"""Tests of the cpu (LLVM/llvmlite) backend."""
