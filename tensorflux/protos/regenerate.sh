#!/usr/bin/env bash
# Regenerates the checked-in *_pb2.py / *_pb2.pyi (all protos) and *_pb2_grpc.py (services
# only) from the .proto files. Needs grpcio-tools (pip install -e '.[dev]'). Run from
# anywhere; it works from the repository root so generated modules import each other as
# tensorflux.protos.xxx_pb2.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$repo_root"

rm -f tensorflux/protos/*_pb2.py tensorflux/protos/*_pb2.pyi tensorflux/protos/*_pb2_grpc.py

python -m grpc_tools.protoc -I. --python_out=. --pyi_out=. tensorflux/protos/*.proto
python -m grpc_tools.protoc -I. --grpc_python_out=. tensorflux/protos/*_service.proto

echo "regenerated $(ls tensorflux/protos/*_pb2*.py | wc -l) modules in tensorflux/protos"
