"""`python -m vertexkit.cli`: the same as the `vertexkit` console script."""

from vertexkit.cli import main

main()
