package rules

// isoPurposes are ISO 20022 ExternalPurpose1Code values, the purpose codes
// of SEPA and SWIFT (pacs.008 Purp/Cd). SCVE is ISO's code for services
// (there is no "SERV").
var isoPurposes = []PurposeCode{
	{"GDDS", "Purchase or sale of goods"},
	{"SCVE", "Purchase or sale of services"},
	{"SUPP", "Supplier payment"},
	{"TRAD", "Trade services"},
	{"ADVA", "Advance payment"},
	{"INTC", "Intra-company payment"},
	{"SALA", "Salary payment"},
	{"LICF", "Licence fee"},
	{"ROYA", "Royalties"},
	{"RENT", "Rent"},
	{"TAXS", "Tax payment"},
	{"OTHR", "Other"},
}

// rbiPurposes is a subset of the Reserve Bank of India purpose codes for
// inward remittances (P-codes, FETERS / RBI Master Direction on reporting),
// the ones a merchant paying an Indian supplier or employee would use. The
// bank receiving the payment reports it to the RBI under this code.
var rbiPurposes = []PurposeCode{
	{"P0101", "Export bills negotiated, purchased or discounted (goods)"},
	{"P0102", "Realisation of export bills sent on collection (goods, full invoice value)"},
	{"P0103", "Advance receipt against an export contract (goods)"},
	{"P0104", "Receipt against export of goods not covered by shipping documents"},
	{"P0105", "Export bills sent on collection (goods)"},
	{"P0106", "Conversion of overdue export bills from NPD to collection mode"},
	{"P0107", "Realisation of NPD export bills (full value of the bill)"},
	{"P0108", "Goods sold under merchanting trade (export leg)"},
	{"P0301", "Purchases towards travel"},
	{"P0801", "Hardware consultancy"},
	{"P0802", "Software implementation or consultancy"},
	{"P0803", "Database and data processing charges"},
	{"P0807", "Off-site software exports"},
	{"P1002", "Trade-related services: commission on exports or imports"},
	{"P1004", "Legal services"},
	{"P1005", "Accounting, auditing, book-keeping and tax consulting services"},
	{"P1006", "Business and management consultancy and public relations services"},
	{"P1007", "Advertising, trade fair, market research and opinion polling services"},
	{"P1008", "Research and development services"},
	{"P1009", "Architectural, engineering and other technical services"},
	{"P1019", "Other services not included elsewhere"},
	{"P1401", "Compensation of employees"},
}

// cnPurposes are the transaction categories of the PBOC RMB Cross-border
// Payment and Receipt Management Information System (RCPMIS), under which a
// Chinese bank reports every cross-border CNY receipt. GOODS_TRADE and
// SERVICE_TRADE need an invoice or contract at the receiving bank;
// CAPITAL_ACCOUNT needs the beneficiary's SAFE registration.
var cnPurposes = []PurposeCode{
	{"GOODS_TRADE", "Trade in goods (货物贸易)"},
	{"SERVICE_TRADE", "Trade in services (服务贸易), e.g. logistics, software, consulting"},
	{"INCOME_TRANSFER", "Income and current transfers (收益和经常转移): employee compensation, investment income, donations"},
	{"CAPITAL_ACCOUNT", "Capital and financial account (资本项目): direct investment, loans"},
}

// uaePurposes is a subset of the Central Bank of the UAE purpose-of-payment
// codes (UAEFTS), three letters each, for business payments into the UAE.
// Goods are GDI (imports) and GDE (exports): there is no single goods code.
var uaePurposes = []PurposeCode{
	{"GDI", "Goods bought (imports)"},
	{"GDE", "Goods sold (exports)"},
	{"GMS", "Processing, repair and maintenance services on goods"},
	{"SCO", "Construction services"},
	{"STR", "Travel"},
	{"ITS", "Computer and information services"},
	{"TCS", "Telecommunication services"},
	{"INS", "Insurance services"},
	{"FIS", "Financial services"},
	{"IPC", "Charges for the use of intellectual property (royalties)"},
	{"TTS", "Technical, trade-related and other business services"},
	{"OTS", "Other business services not included elsewhere"},
	{"RNT", "Rent payments"},
	{"SAL", "Salary (compensation of employees)"},
	{"FAM", "Family support (workers' remittances)"},
	{"EDU", "Educational support"},
	{"DIV", "Dividend payouts"},
}
