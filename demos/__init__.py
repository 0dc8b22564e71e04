"""``make demo``: a streaming query on an embedded source, with each micro-batch's progress printed."""
