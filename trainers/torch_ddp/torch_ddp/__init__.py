"""A PyTorch trainer that follows Vertex AI's conventions; see `torch_ddp.task`."""
