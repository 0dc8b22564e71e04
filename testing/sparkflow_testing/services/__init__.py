"""Helper services.

Redis (:mod:`.redis_server`), a scripted HTTP service (:mod:`.scripted_http_service`) and the Async I/O
lookups that call them (:mod:`.async_lookups`).
"""
