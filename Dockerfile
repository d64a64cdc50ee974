# fieldgraph worker image: `docker build -t fieldgraph .` (used by docker-compose.yml).
FROM python:3.12-slim
WORKDIR /app
COPY pyproject.toml README.md ./
COPY normalizers normalizers
COPY graph graph
COPY ingest ingest
COPY cypher cypher
RUN pip install --no-cache-dir . && useradd --create-home --uid 10001 fieldgraph
USER fieldgraph
ENTRYPOINT ["fieldgraph"]
CMD ["worker"]
