# The deployable image: NVIDIA's Triton Inference Server with this model repository and its Python package.
#
#   docker build -t str-ocr-triton .
#   docker run --gpus=all --rm --shm-size=1g --ulimit memlock=-1 --ulimit stack=67108864 \
#       -p 8000:8000 -p 8001:8001 -p 8002:8002 -e TRITON_ADMIN_KEY=change-me str-ocr-triton
#
# Release 24.10 ships tritonserver 2.51.0, the server the local launcher and the tests use, which supports
# --model-config-name, and Python 3.10, CUDA 12.6.
ARG TRITON_RELEASE=24.10
FROM nvcr.io/nvidia/tritonserver:${TRITON_RELEASE}-py3

# A CUDA build of torch for the container's CUDA 12.6 (the cu124 wheels run on its driver), then the
# pinned packages the models and the launcher import.
RUN python3 -m pip install --no-cache-dir torch==2.5.1 --index-url https://download.pytorch.org/whl/cu124 \
 && python3 -m pip install --no-cache-dir numpy==1.26.4 pillow==12.3.0 tritonclient==2.51.0 grpcio==1.85.1 protobuf==6.33.6

WORKDIR /opt/str_ocr
COPY pyproject.toml README.md ./
COPY backend_src backend_src
RUN python3 -m pip install --no-cache-dir --no-deps . && rm -rf build backend_src/*.egg-info
COPY model_repository model_repository

USER triton-server
EXPOSE 8000 8001 8002
HEALTHCHECK --interval=10s --timeout=5s --start-period=120s --retries=3 \
  CMD python3 -c "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/v2/health/ready', timeout=4).status != 200)"

# The administrative APIs sit behind the header admin-key (gRPC: triton-grpc-protocol-admin-key): its value
# is $TRITON_ADMIN_KEY, or one generated at start that only the launcher knows. The watchdog loads a model
# again when its Python stub process dies. Add launcher options (e.g. --config-name NAME) after the image name.
ENTRYPOINT ["python3", "-m", "str_ocr_server", "--model-repository", "/opt/str_ocr/model_repository", \
            "--restrict-admin", "--watchdog", "2", "--disable-auto-complete-config"]
CMD []
