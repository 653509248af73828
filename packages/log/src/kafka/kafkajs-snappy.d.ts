// kafkajs-snappy ships no types: it exports a codec factory in kafkajs's CompressionCodecs shape.
declare module 'kafkajs-snappy' {
  const SnappyCodec: () => {
    compress(encoder: unknown): Promise<Buffer>;
    decompress(buffer: Buffer): Promise<Buffer>;
  };
  export default SnappyCodec;
}
