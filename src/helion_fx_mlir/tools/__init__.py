"""What users and developers run: the command-line tools, the bench, the docs generator, the
upstream check, the conformance run and the fuzzers."""
