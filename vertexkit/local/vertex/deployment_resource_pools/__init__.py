"""Vertex AI deployment resource pools: machines shared by models deployed to endpoints."""
