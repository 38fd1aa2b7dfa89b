#!/usr/bin/env bash
# Installs the system programs Mediaplane runs (ffmpeg/ffprobe; chromium for browser tests; OpenStack Swift as the
# local S3-compatible server of the storage tests; zbarimg, which reads back the QR codes of the player tests;
# pocketsphinx and its US English model, the offline speech recognizer of live captions, and espeak-ng, which speaks the
# captions test's clip) when they are missing, from Debian's packages.
# Skipped when FFMPEG_PATH points at an ffmpeg of your own.
set -euo pipefail
want=()
if [ -z "${FFMPEG_PATH:-}" ] && ! command -v ffmpeg >/dev/null 2>&1; then want+=(ffmpeg); fi
for extra in "$@"; do
  case "$extra" in
    chromium) [ -x /usr/bin/chromium ] || want+=(chromium) ;;
    zbar) command -v zbarimg >/dev/null 2>&1 || want+=(zbar-tools) ;;
    swift) command -v swift-proxy-server >/dev/null 2>&1 || want+=(swift-proxy swift-object swift-container swift-account) ;;
    pocketsphinx)
      command -v pocketsphinx_continuous >/dev/null 2>&1 || want+=(pocketsphinx)
      [ -d /usr/share/pocketsphinx/model/en-us/en-us ] || want+=(pocketsphinx-en-us)
      ;;
    espeak) command -v espeak-ng >/dev/null 2>&1 || want+=(espeak-ng) ;;
  esac
done
[ ${#want[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "Mediaplane needs: ${want[*]}. Install them (e.g. apt-get install ${want[*]}) or set FFMPEG_PATH/FFPROBE_PATH." >&2
  exit 1
fi
echo "Installing ${want[*]} from Debian's packages (once)..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
