"""Vertex AI Vizier: studies and their trials, suggested by the local tuning jobs' optimiser."""
