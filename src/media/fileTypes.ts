/** What upload accepts and transcoding reads, by file type; one list so both always agree. */
export const FILE_TYPE_EXTENSIONS = {
  Video: ['.mp4', '.m4v', '.mov', '.mkv', '.webm', '.avi', '.ts', '.mts', '.m2ts', '.mxf', '.flv', '.mpg', '.mpeg', '.wmv', '.3gp', '.ogv'],
  Audio: ['.mp3', '.aac', '.m4a', '.wav', '.flac', '.ogg', '.oga', '.opus', '.wma', '.aiff'],
  Caption: ['.vtt', '.srt', '.ass', '.ssa', '.ttml', '.dfxp'],
} as const;

export type FileType = keyof typeof FILE_TYPE_EXTENSIONS;

export const VIDEO_EXTENSIONS: readonly string[] = FILE_TYPE_EXTENSIONS.Video;
export const AUDIO_EXTENSIONS: readonly string[] = FILE_TYPE_EXTENSIONS.Audio;
