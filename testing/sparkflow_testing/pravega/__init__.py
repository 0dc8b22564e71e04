"""Pravega.

The real standalone from Maven (:mod:`.standalone`), the project's emulator (:mod:`.emulator`), the
admin client (:mod:`.admin`), security material (:mod:`.security`) and the backend picker
(:mod:`.cluster`).
"""
