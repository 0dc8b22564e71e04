"""Kinesis endpoints.

Moto and kinesalite (LocalStack where Docker answers), and a throttling proxy (:mod:`.endpoint`).
"""
