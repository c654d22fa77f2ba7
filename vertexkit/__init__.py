"""vertexkit: Kubeflow pipeline components for Vertex AI custom training, and a local cloud."""

__version__ = "0.1.0"
