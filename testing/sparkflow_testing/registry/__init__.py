"""Schema registries for the tests (empty for now: issue 24 adds an Apicurio Registry launcher here)."""
