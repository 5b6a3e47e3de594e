# The deployable image: a Triton Inference Server with this model repository and its Python package, on either
# of two bases (`make image` picks the one that fits the machine, and says which):
#
#   NGC (default): NVIDIA's tritonserver:24.10-py3 (server 2.51, Python 3.10, CUDA 12.6) and a CUDA build of torch.
#       docker build -t str-ocr-triton .
#   CPU: a Debian bookworm base (debian:bookworm-slim, or one made without a registry by docker/base_image.sh),
#       Debian's Python 3.11, the CPU build of torch, and the same server 2.51 from the nvidia-pytriton wheel.
#       docker build -t str-ocr-triton:cpu --build-arg BASE_IMAGE=debian:bookworm-slim .
#
# Both run the same launcher as the same non-root user, with the same defaults and HEALTHCHECK. The README's
# "Ship it" section has the `docker run` command.
ARG BASE_IMAGE=nvcr.io/nvidia/tritonserver:24.10-py3

# The Python packages of the CPU image, in a stage of their own so that the wheels a build brings
# (docker/wheels: this machine's CPU torch) stay out of the final image's layers.
FROM ${BASE_IMAGE} AS deps
ARG CPU_TORCH_INDEX=https://download.pytorch.org/whl/cpu
COPY docker/install.sh requirements.txt /tmp/build/
COPY docker/wheels/ /tmp/build/wheels/
RUN bash /tmp/build/install.sh deps /tmp/build
# The launcher's stub reaper (str_ocr_server.compat.stub_reaper), built against this base's C library; its compiler stays here.
COPY scripts/build_reaper.sh backend_src/str_ocr_server/compat/reap_stubs.c /tmp/build/
RUN bash /tmp/build/install.sh reaper /tmp/build

FROM ${BASE_IMAGE}
ARG NGC_TORCH=torch==2.5.1
ARG NGC_TORCH_INDEX=https://download.pytorch.org/whl/cu124
COPY --from=deps /opt/venv /opt/venv
COPY docker/install.sh requirements.txt /tmp/build/
RUN bash /tmp/build/install.sh runtime /tmp/build && rm -rf /tmp/build
# The CPU image's Python (and the Python backend's stub, which finds its packages through the first python3
# on PATH) is /opt/venv's; NGC's image has no /opt/venv/bin and keeps its own.
ENV PATH=/opt/venv/bin:$PATH PYTHONDONTWRITEBYTECODE=1

WORKDIR /opt/str_ocr
COPY pyproject.toml ./
COPY backend_src backend_src
COPY --from=deps /opt/reaper/libreap_stubs.so backend_src/str_ocr_server/compat/
RUN python3 -m pip install --no-cache-dir --no-deps . && rm -rf build backend_src/*.egg-info
COPY model_repository model_repository
# text_detection's file for Triton's onnxruntime backend (--model-config-name onnxruntime, NVIDIA's base).
RUN python3 -c "from str_ocr.detection import copy_detector; copy_detector('model_repository/text_detection/1/model.onnx')"
# The exported models' repository, for a server with their backend (NVIDIA's): not the launcher's default.
COPY model_repository_onnx model_repository_onnx
# The launcher lays out the wheel server's backend directory now, so that the running image writes nothing.
RUN python3 -c "from str_ocr_server.triton import find_triton; find_triton()"
# The CPU engines' graphs of the served weights (text_recognition's and the second's), exported now, so that a
# container starts without exporting them: the user it runs as cannot write here (other weights are exported at
# load time: point STR_OCR_GRAPH_CACHE at a writable folder then).
ENV STR_OCR_GRAPH_CACHE=/opt/str_ocr/graphs
RUN python3 -c "from str_ocr import load_model; from str_ocr.graphs import exported_graphs; \
from str_ocr_triton.config import served_recognizers; \
[exported_graphs(load_model(*weights)) for weights in served_recognizers()]" \
    && chmod -R a+rX /opt/str_ocr/graphs

USER triton-server
EXPOSE 8000 8001 8002 8003
HEALTHCHECK --interval=10s --timeout=5s --start-period=120s --retries=3 \
  CMD python3 -c "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8000/v2/health/ready', timeout=4).status != 200)"

# The administrative APIs sit behind the header admin-key (gRPC: triton-grpc-protocol-admin-key): its value
# is $TRITON_ADMIN_KEY, or one generated at start that only the launcher knows. The watchdog loads a model
# again when its Python stub process dies. Add launcher options (e.g. --config-name NAME) after the image name.
# A container listens on every interface of its own network, HTTP and gRPC behind the launcher's proxies, which
# refuse what server 2.51 mishandles (str_ocr_server.compat).
ENTRYPOINT ["python3", "-m", "str_ocr_server", "--model-repository", "/opt/str_ocr/model_repository", \
            "--restrict-admin", "--watchdog", "2", "--disable-auto-complete-config", "--address", "0.0.0.0"]
