"""What every Vertex resource shares, written once: the `operations` sub-collection of any
resource (`operations.py`) and IAM policies (`iam.py`)."""
