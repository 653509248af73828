#!/usr/bin/env bash
# Installs every service the integration tests need, from Debian's packages and the registries:
# Redis and Chromium (Debian), Apache Kafka and Apicurio Registry (Maven Central, run with the machine's Java),
# schemathesis (PyPI) for the OpenAPI check, clickhouse-connect (PyPI) for the warehouse's HTTP interface,
# Mailpit (Go module proxy) as the SMTP server mail is sent through.
set -euo pipefail
cd "$(dirname "$0")"
./redis/install.sh
./chromium/install.sh
./schemathesis/install.sh
./clickhouse-connect/install.sh
./kafka/install.sh
./schema-registry/install.sh
./mailpit/install.sh
