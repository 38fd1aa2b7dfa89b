// Types of requests and answers by method and path, read from the generated OpenAPI types (openapi.ts).
import type { paths } from './openapi.ts';

export type { components, operations, paths } from './openapi.ts';

export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

type OperationAt<T extends keyof paths, M extends Method> = Lowercase<M> extends keyof paths[T] ? NonNullable<paths[T][Lowercase<M>]> : never;

/** The path templates (`/vod/v1/assets/{id}`) that have an operation for `M`. */
export type PathTemplate<M extends Method> = { [T in keyof paths]: [OperationAt<T, M>] extends [never] ? never : T }[keyof paths];

/** `/vod/v1/assets/{id}` → `/vod/v1/assets/${string}`: a path with its parameters filled in. */
type Filled<S> = S extends `${infer Head}{${string}}${infer Tail}` ? `${Head}${string}${Filled<Tail>}` : S;

/** A path that `request` accepts for `M`: a template, or a template with its parameters filled in. */
export type ApiPath<M extends Method> = Filled<PathTemplate<M>> | PathTemplate<M>;

/** The template a concrete path is an instance of (a template itself first: `/vod/v1/assets/progress` is not `{id}`). */
type TemplateOf<M extends Method, P extends string> =
  P extends PathTemplate<M> ? P : { [T in PathTemplate<M>]: P extends Filled<T> ? T : never }[PathTemplate<M>];

export type Operation<M extends Method, P extends string> = OperationAt<TemplateOf<M, P>, M>;

type Json<R> = R extends { content: { 'application/json': infer J } } ? J : undefined;
type SuccessStatus = 200 | 201 | 202 | 203 | 204;
type Responses<O> = O extends { responses: infer R } ? R : never;

/** The parsed JSON body of the operation's success answer (`undefined` when it has none). */
export type ResponseOf<M extends Method, P extends string> = {
  [S in keyof Responses<Operation<M, P>>]: S extends SuccessStatus ? Json<Responses<Operation<M, P>>[S]> : never;
}[keyof Responses<Operation<M, P>>];

/** The operation's JSON request body. */
export type BodyOf<M extends Method, P extends string> =
  Operation<M, P> extends { requestBody: { content: { 'application/json': infer B } } }
    ? B
    : Operation<M, P> extends { requestBody?: { content: { 'application/json': infer B } } }
      ? B
      : never;

/** The operation's query parameters. */
export type QueryOf<M extends Method, P extends string> = Operation<M, P> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

/** The paths of list operations (`GET` answering the paging envelope), which `paginate` walks. */
export type ListPath = {
  [P in ApiPath<'GET'>]: ResponseOf<'GET', P> extends { items: unknown[]; hasMore: boolean } ? P : never;
}[ApiPath<'GET'>];

/** One item of a list operation's pages. */
export type ItemOf<P extends string> = ResponseOf<'GET', P> extends { items: (infer I)[] } ? I : never;

/** Values a query parameter takes: arrays are sent as repeated parameters. */
export type QueryValue = string | number | boolean | null | undefined | readonly (string | number | boolean)[];
