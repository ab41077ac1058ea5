// Find every ergonomic product, quote them all in parallel, and order the
// cheapest one in stock. Only the summary comes back to the model.
const hits = await tools.search({ tag: "ergonomic" });
console.log(`found ${hits.length} ergonomic products`);

const quotes = await Promise.all(hits.map((h) => tools.quote({ sku: h.sku })));
const inStock = quotes.filter((q) => q.in_stock > 0);
if (inStock.length === 0) {
  return "nothing in stock";
}
inStock.sort((a, b) => a.price_cents - b.price_cents);
const best = inStock[0];

try {
  const order = await tools.order({ sku: best.sku });
  return { ordered: order.order_id, price: `$${(best.price_cents / 100).toFixed(2)}`, compared: quotes.length };
} catch (err) {
  if (err instanceof ToolCallError) {
    return `could not order ${best.sku}: ${err.message}`;
  }
  throw err;
}
