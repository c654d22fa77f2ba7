# The vertexkit runtime image: every component of the compiled pipelines runs in it on Vertex AI
# (and on Kubeflow). Build and push it once per release, then compile with --image:
#   make image IMAGE=REGION-docker.pkg.dev/PROJECT/REPOSITORY/vertexkit-runtime:0.1.0
# Not built in CI: no Docker engine runs on the machines this project is developed on.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /opt/vertexkit
COPY pyproject.toml README.md ./
COPY vertexkit ./vertexkit
COPY components ./components
COPY pipelines ./pipelines
COPY trainers ./trainers
RUN pip install . ./trainers/tabular
