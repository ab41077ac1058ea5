package sdkgen

import "strings"

// ownGlobals are the global names the declaration block itself declares.
var ownGlobals = []string{"JsonValue", "ToolName", "ToolCallError", "tools", "Tools", "ToolMatch", "ToolDescription", "console", "setTimeout", "clearTimeout"}

// libGlobals are the upper-case global names of TypeScript's ES2023 library (lib.es5 through
// lib.es2023, decorators included). A generated type name such as `ArrayBuffer` (tool "array",
// definition "Buffer") would clash with them, so the name table treats them as taken.
var libGlobals = strings.Fields(`
	AggregateError AggregateErrorConstructor Array ArrayBuffer ArrayBufferConstructor
	ArrayBufferLike ArrayBufferTypes ArrayBufferView ArrayConstructor ArrayIterator
	ArrayLike AsyncGenerator AsyncGeneratorFunction AsyncGeneratorFunctionConstructor
	AsyncIterable AsyncIterableIterator AsyncIterator AsyncIteratorObject Atomics Awaited
	BigInt BigInt64Array BigInt64ArrayConstructor BigIntConstructor BigIntToLocaleStringOptions
	BigUint64Array BigUint64ArrayConstructor Boolean BooleanConstructor BuiltinIteratorReturn
	CallableFunction Capitalize ClassAccessorDecoratorContext ClassAccessorDecoratorResult
	ClassAccessorDecoratorTarget ClassDecorator ClassDecoratorContext ClassFieldDecoratorContext
	ClassGetterDecoratorContext ClassMemberDecoratorContext ClassMethodDecoratorContext
	ClassSetterDecoratorContext ConcatArray ConstructorParameters DataView DataViewConstructor
	Date DateConstructor DecoratorContext DecoratorMetadata DecoratorMetadataObject
	Error ErrorConstructor ErrorOptions EvalError EvalErrorConstructor Exclude
	Extract FinalizationRegistry FinalizationRegistryConstructor FlatArray Float32Array
	Float32ArrayConstructor Float64Array Float64ArrayConstructor Function FunctionConstructor
	Generator GeneratorFunction GeneratorFunctionConstructor IArguments ImportAssertions
	ImportAttributes ImportCallOptions ImportMeta Infinity InstanceType Int16Array
	Int16ArrayConstructor Int32Array Int32ArrayConstructor Int8Array Int8ArrayConstructor
	Intl Iterable IterableIterator Iterator IteratorObject IteratorResult IteratorReturnResult
	IteratorYieldResult JSON Lowercase Map MapConstructor MapIterator Math MethodDecorator NaN
	NewableFunction NoInfer NonNullable Number NumberConstructor Object ObjectConstructor Omit
	OmitThisParameter ParameterDecorator Parameters Partial Pick Promise PromiseConstructor
	PromiseConstructorLike PromiseFulfilledResult PromiseLike PromiseRejectedResult
	PromiseSettledResult PropertyDecorator PropertyDescriptor PropertyDescriptorMap
	PropertyKey Proxy ProxyConstructor ProxyHandler RangeError RangeErrorConstructor Readonly
	ReadonlyArray ReadonlyMap ReadonlySet Record ReferenceError ReferenceErrorConstructor
	Reflect RegExp RegExpConstructor RegExpExecArray RegExpIndicesArray RegExpMatchArray
	RegExpStringIterator Required ReturnType Set SetConstructor SetIterator SharedArrayBuffer
	SharedArrayBufferConstructor String StringConstructor StringIterator Symbol SymbolConstructor
	SyntaxError SyntaxErrorConstructor TemplateStringsArray ThisParameterType ThisType TypeError
	TypeErrorConstructor TypedPropertyDescriptor URIError URIErrorConstructor Uint16Array
	Uint16ArrayConstructor Uint32Array Uint32ArrayConstructor Uint8Array Uint8ArrayConstructor
	Uint8ClampedArray Uint8ClampedArrayConstructor Uncapitalize Uppercase WeakKey WeakKeyTypes
	WeakMap WeakMapConstructor WeakRef WeakRefConstructor WeakSet WeakSetConstructor
`)

// reservedNames is what a fresh name table starts with.
func reservedNames() []string {
	out := make([]string, 0, len(ownGlobals)+len(libGlobals))
	out = append(out, ownGlobals...)
	return append(out, libGlobals...)
}
