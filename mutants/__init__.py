"""The project's mutation list: planted bugs in the guarantees, and the runner behind ``make mutants``.

``mutations.py`` holds the list as data (one exact search/replace per planted bug, and the pytest node
ids that guard it); ``run.py`` applies each one in a temporary copy of the tree, runs its guard and
reports caught or survived. Not part of ``make test``; ``unit_tests/mutants`` checks that every
mutation still applies to the current tree.
"""
