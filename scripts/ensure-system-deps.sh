#!/usr/bin/env bash
# Installs the system programs Mediaplane runs (ffmpeg/ffprobe, and pocketsphinx with its US English model, the offline
# speech recognizer of live captions: without it a fresh machine offers no caption language; chromium for browser
# tests; OpenStack Swift as the local S3-compatible server of the storage tests; zbarimg, which reads back the QR codes
# of the player tests; zsh, where the CLI's completion is tried; espeak-ng, which speaks the captions test's clip) when they are missing, from Debian's packages.
# Each is skipped when its variable points at one of your own: FFMPEG_PATH, POCKETSPHINX_PATH (the recognizer),
# MEDIAPLANE_CAPTION_MODELS_DIR (the speech models).
set -euo pipefail
want=()
if [ -z "${FFMPEG_PATH:-}" ] && ! command -v ffmpeg >/dev/null 2>&1; then want+=(ffmpeg); fi
# Live captions, as ffmpeg: 24 MB to download, 37 MB on disk (the model; Debian's ffmpeg already brings the libraries).
if [ -z "${POCKETSPHINX_PATH:-}" ] && ! command -v pocketsphinx_continuous >/dev/null 2>&1; then want+=(pocketsphinx); fi
if [ -z "${MEDIAPLANE_CAPTION_MODELS_DIR:-}" ] && [ ! -d /usr/share/pocketsphinx/model/en-us/en-us ]; then want+=(pocketsphinx-en-us); fi
for extra in "$@"; do
  case "$extra" in
    chromium) [ -x /usr/bin/chromium ] || want+=(chromium) ;;
    zbar) command -v zbarimg >/dev/null 2>&1 || want+=(zbar-tools) ;;
    zsh) command -v zsh >/dev/null 2>&1 || want+=(zsh) ;;
    swift) command -v swift-proxy-server >/dev/null 2>&1 || want+=(swift-proxy swift-object swift-container swift-account) ;;
    # Tests use Debian's recognizer and model whatever the variables say.
    pocketsphinx)
      command -v pocketsphinx_continuous >/dev/null 2>&1 || want+=(pocketsphinx)
      [ -d /usr/share/pocketsphinx/model/en-us/en-us ] || want+=(pocketsphinx-en-us)
      ;;
    espeak) command -v espeak-ng >/dev/null 2>&1 || want+=(espeak-ng) ;;
  esac
done
[ ${#want[@]} -eq 0 ] && exit 0
# Once each (a test's pocketsphinx beside the default one).
mapfile -t want < <(printf '%s\n' "${want[@]}" | awk '!seen[$0]++')
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "Mediaplane needs: ${want[*]}. Install them (e.g. apt-get install ${want[*]}) or set FFMPEG_PATH/FFPROBE_PATH, POCKETSPHINX_PATH and MEDIAPLANE_CAPTION_MODELS_DIR." >&2
  exit 1
fi
echo "Installing ${want[*]} from Debian's packages (once)..." >&2
export DEBIAN_FRONTEND=noninteractive
# Another installation (the container tests' podman, a second checkout) may hold the package lock: wait for it.
apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null
apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "${want[@]}" >/dev/null
