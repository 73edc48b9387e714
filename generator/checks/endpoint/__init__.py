"""Checks of endpoints (`endpoint.*`): a result's endpoint block against its endpoint file
(`identity`), an endpoint's schedule against the workloads (`schedule`), and `api_key_env` a
variable name (`key_env`).
"""
