export { createClient, type Client, type ClientOptions, type FetchLike, type HttpResponse, type RequestOptions } from './client.ts';
export { MediaplaneError, ProcessingFailedError, type FieldError } from './errors.ts';
export type { UploadOptions, UploadProgress, UploadResult, UploadState } from './upload.ts';
export type { Asset, Recording, WaitOptions } from './wait.ts';
export { verifyWebhook, type VerifyWebhookOptions, type WebhookHeaders } from './webhooks.ts';
export type { ApiPath, BodyOf, components, ItemOf, ListPath, Method, operations, paths, QueryOf, ResponseOf } from './types.ts';
