"""The local console: the local cloud's state in a browser, at `/console/` on its own port.

It reads the services' state through their own stores and models and acts (cancel, pause,
resume, predict) through the same handlers their REST routes use; no service imports it.
"""
